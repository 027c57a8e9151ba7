-- CreateTable
CREATE TABLE "ComplianceSettings" (
    "workspaceId" UUID NOT NULL,
    "disclosure" TEXT,
    "redactions" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ComplianceSettings_pkey" PRIMARY KEY ("workspaceId")
);

-- CreateTable
CREATE TABLE "KnowledgePassage" (
    "documentId" UUID NOT NULL,
    "ordinal" INTEGER NOT NULL,
    "text" TEXT NOT NULL,
    "searchEnglish" tsvector NOT NULL,
    "searchSpanish" tsvector NOT NULL,
    "searchFrench" tsvector NOT NULL,
    "searchGerman" tsvector NOT NULL,
    "searchSimple" tsvector NOT NULL,

    CONSTRAINT "KnowledgePassage_pkey" PRIMARY KEY ("documentId","ordinal")
);

-- CreateIndex
CREATE INDEX "KnowledgePassage_searchEnglish_idx" ON "KnowledgePassage" USING GIN ("searchEnglish");

-- CreateIndex
CREATE INDEX "KnowledgePassage_searchSpanish_idx" ON "KnowledgePassage" USING GIN ("searchSpanish");

-- CreateIndex
CREATE INDEX "KnowledgePassage_searchFrench_idx" ON "KnowledgePassage" USING GIN ("searchFrench");

-- CreateIndex
CREATE INDEX "KnowledgePassage_searchGerman_idx" ON "KnowledgePassage" USING GIN ("searchGerman");

-- CreateIndex
CREATE INDEX "KnowledgePassage_searchSimple_idx" ON "KnowledgePassage" USING GIN ("searchSimple");

-- AddForeignKey
ALTER TABLE "ComplianceSettings" ADD CONSTRAINT "ComplianceSettings_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "KnowledgePassage" ADD CONSTRAINT "KnowledgePassage_documentId_fkey" FOREIGN KEY ("documentId") REFERENCES "KnowledgeDocument"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Written by hand (docs/features/knowledge-search.md#passages): a document's passages, made by the database in the
-- statement that writes the document, whoever writes it (the API, the operator CLI, a test's createMany), and gone
-- with it (the foreign key cascades). Paragraphs are split on blank lines and their whitespace collapsed; a paragraph
-- over 200 words is cut into its sentences (after . ! or ?), a sentence over 200 words into slices of 150 words; then
-- these pieces are packed in order into passages: a passage is closed once it holds 100 words or the next piece would
-- take it over 200. So a passage holds 100 to 200 words but at a document's end (or before a piece that would not
-- fit), and never cuts a paragraph of at most 200 words, nor a sentence of at most 200.
CREATE FUNCTION knowledge_passages(content TEXT)
RETURNS TABLE (passage_ordinal INTEGER, passage_text TEXT)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
DECLARE
  paragraph TEXT;
  sentence TEXT;
  piece TEXT;
  pieces TEXT[];
  words TEXT[];
  word_count INTEGER;
  slice_start INTEGER;
  current_text TEXT := '';
  current_words INTEGER := 0;
  separator TEXT;
BEGIN
  passage_ordinal := 0;
  FOR paragraph IN SELECT btrim(regexp_replace(p, '\s+', ' ', 'g')) FROM regexp_split_to_table(content, '\n\s*\n') AS p
  LOOP
    CONTINUE WHEN paragraph = '';
    IF cardinality(string_to_array(paragraph, ' ')) <= 200 THEN
      pieces := ARRAY[paragraph];
    ELSE
      pieces := '{}';
      FOR sentence IN SELECT s FROM regexp_split_to_table(paragraph, '(?<=[.!?]) ') AS s LOOP
        words := string_to_array(sentence, ' ');
        IF cardinality(words) <= 200 THEN
          pieces := pieces || sentence;
        ELSE
          slice_start := 1;
          WHILE slice_start <= cardinality(words) LOOP
            pieces := pieces || array_to_string(words[slice_start:slice_start + 149], ' ');
            slice_start := slice_start + 150;
          END LOOP;
        END IF;
      END LOOP;
    END IF;
    separator := E'\n\n';
    FOREACH piece IN ARRAY pieces LOOP
      word_count := cardinality(string_to_array(piece, ' '));
      IF current_words > 0 AND (current_words >= 100 OR current_words + word_count > 200) THEN
        passage_ordinal := passage_ordinal + 1;
        passage_text := current_text;
        RETURN NEXT;
        current_text := '';
        current_words := 0;
      END IF;
      current_text := CASE WHEN current_words = 0 THEN piece ELSE current_text || separator || piece END;
      current_words := current_words + word_count;
      separator := ' ';
    END LOOP;
  END LOOP;
  IF current_words > 0 THEN
    passage_ordinal := passage_ordinal + 1;
    passage_text := current_text;
    RETURN NEXT;
  END IF;
END
$fn$;

-- A document's passages with their vectors: the title (weight C: a word of it counts twice a word of the passage, so
-- a passage of the "Returns" document is found by "returns" but a title alone does not outrank what the passage
-- says) and the passage (weight D) under each configuration.
CREATE FUNCTION "KnowledgeDocument_write_passages"() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    DELETE FROM "KnowledgePassage" WHERE "documentId" = OLD.id;
  END IF;
  INSERT INTO "KnowledgePassage"
         ("documentId", ordinal, text, "searchEnglish", "searchSpanish", "searchFrench", "searchGerman", "searchSimple")
  SELECT NEW.id, passage_ordinal, passage_text,
         setweight(to_tsvector('english', NEW.title), 'C') || to_tsvector('english', passage_text),
         setweight(to_tsvector('spanish', NEW.title), 'C') || to_tsvector('spanish', passage_text),
         setweight(to_tsvector('french', NEW.title), 'C') || to_tsvector('french', passage_text),
         setweight(to_tsvector('german', NEW.title), 'C') || to_tsvector('german', passage_text),
         setweight(to_tsvector('simple', NEW.title), 'C') || to_tsvector('simple', passage_text)
    FROM knowledge_passages(NEW.content);
  RETURN NULL;
END
$fn$;

CREATE TRIGGER "KnowledgeDocument_passages"
AFTER INSERT OR UPDATE OF content, title ON "KnowledgeDocument"
FOR EACH ROW EXECUTE FUNCTION "KnowledgeDocument_write_passages"();

-- The documents written before this migration get their passages here.
UPDATE "KnowledgeDocument" SET content = content;
