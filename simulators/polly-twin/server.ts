import { createHash, randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { speechAudio } from './audio';
import { signatureFault } from './sigv4';
import { SsmlError, spokenTextOf } from '../twin-common/ssml';
import { TWIN_VOICES, findTwinVoice } from './voices';

/**
 * The Polly twin (docs/features/voices.md#the-polly-twin): Amazon Polly's SynthesizeSpeech (`POST /v1/speech`) and
 * DescribeVoices (`GET /v1/voices`) as the restJson1 protocol of AWS's published model (vendor/smithy/polly/) has
 * them, SigV4-signed, so that the official `@aws-sdk/client-polly` talks to it with only its endpoint changed. Its
 * errors are the model's (`x-amzn-ErrorType` and `{"message"}`), its audio audio.ts's. TEST CONTROL routes (not AWS's)
 * under /control. It answers HTTP/2 (the SDK's Polly client speaks HTTP/2: cleartext, h2c, to an http:// endpoint)
 * and HTTP/1.1 on one port, told apart by the HTTP/2 connection preface.
 */
export interface PollyTwinOptions {
  credentials: ReadonlyArray<{ accessKeyId: string; secretAccessKey: string }>;
  region: string;
  /** The lame program, for MP3 (default: `lame` on PATH). */
  lamePath?: string;
}

/** A synthesis the twin made (GET /control/requests): what was asked, what was said, and the audio's sha256. */
export interface ReceivedSynthesis {
  VoiceId: string;
  Engine: string;
  OutputFormat: string;
  SampleRate: string;
  TextType: string;
  Text: string;
  LanguageCode?: string;
  spoken: string;
  audioSha256: string;
  /** The JSON body as received. */
  request: Record<string, unknown>;
}

export interface PollyTwin {
  /** Answers the endpoint to give the SDK (`http://host:port`). */
  listen(port: number, host?: string): Promise<string>;
  close(): Promise<void>;
  readonly syntheses: readonly ReceivedSynthesis[];
  /** The next `count` SynthesizeSpeech requests answer `error` (POST /control/failures). */
  failNext(count: number, error?: 'ServiceFailureException' | 'ThrottlingException'): void;
  reset(): void;
}

/** Polly's documented input limit: 6,000 characters in all, of which at most 3,000 billed (spoken). */
export const MAX_TEXT_CHARACTERS = 6_000;
export const MAX_BILLED_CHARACTERS = 3_000;

const FORMAT_RATES: Record<string, { rates: string[]; standard: string; neural: string; contentType: string }> = {
  mp3: { rates: ['8000', '16000', '22050', '24000'], standard: '22050', neural: '24000', contentType: 'audio/mpeg' },
  pcm: { rates: ['8000', '16000'], standard: '16000', neural: '16000', contentType: 'audio/pcm' },
};
const OUTPUT_FORMATS = ['json', 'mp3', 'ogg_vorbis', 'pcm'];
const ENGINES = ['standard', 'neural', 'long-form', 'generative'];

/** An error as restJson1 carries it: the status of the shape's httpError, its name in x-amzn-ErrorType. */
class PollyError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

const required = (body: Record<string, unknown>, name: string): string => {
  const value = body[name];
  if (typeof value !== 'string' || value === '')
    throw new PollyError(400, 'ValidationException', `1 validation error detected: ${name} must not be null`);
  return value;
};

const optional = (body: Record<string, unknown>, name: string): string | undefined => {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new PollyError(400, 'SerializationException', `${name} must be a string`);
  return value;
};

/** A request as both HTTP versions give it. */
interface TwinRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

interface TwinAnswer {
  status: number;
  headers?: Record<string, string>;
  body: Buffer | string;
}

const json = (status: number, value: unknown, headers: Record<string, string> = {}): TwinAnswer => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(value),
});

const errorAnswer = (error: PollyError) =>
  json(error.status, { message: error.message }, { 'x-amzn-ErrorType': error.type });

/** The most of a request body the twin reads: Polly's 6,000 characters of text, in UTF-8 and JSON, fit well within. */
const MAX_BODY_BYTES = 64 * 1024;

export function createPollyTwin(options: PollyTwinOptions): PollyTwin {
  const secrets = new Map(options.credentials.map((entry) => [entry.accessKeyId, entry.secretAccessKey]));
  const syntheses: ReceivedSynthesis[] = [];
  const failures: Array<'ServiceFailureException' | 'ThrottlingException'> = [];
  const sockets = new Set<Socket>();

  function describeVoices(query: URLSearchParams): TwinAnswer {
    if (query.has('NextToken')) throw new PollyError(400, 'InvalidNextTokenException', 'The NextToken is invalid.');
    const engine = query.get('Engine');
    const language = query.get('LanguageCode');
    if (engine !== null && !ENGINES.includes(engine))
      throw new PollyError(400, 'ValidationException', `1 validation error detected: Engine '${engine}'`);
    const additional = query.get('IncludeAdditionalLanguageCodes') === 'true';
    const voices = TWIN_VOICES.filter(
      (voice) =>
        (engine === null || (voice.SupportedEngines as string[]).includes(engine)) &&
        (language === null ||
          voice.LanguageCode === language ||
          (additional && voice.AdditionalLanguageCodes?.includes(language))),
    );
    return json(200, { Voices: voices });
  }

  async function synthesize(raw: Buffer) {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error('not an object');
    } catch {
      throw new PollyError(400, 'SerializationException', 'The request body is not a JSON object.');
    }
    const voiceId = required(body, 'VoiceId');
    const outputFormat = required(body, 'OutputFormat');
    const text = required(body, 'Text');
    const engine = optional(body, 'Engine') ?? 'standard';
    const textType = optional(body, 'TextType') ?? 'text';
    const languageCode = optional(body, 'LanguageCode');
    if (!OUTPUT_FORMATS.includes(outputFormat) || !ENGINES.includes(engine) || !['text', 'ssml'].includes(textType))
      throw new PollyError(400, 'ValidationException', '1 validation error detected: a value is not one of its enum');
    const voice = findTwinVoice(voiceId);
    if (!voice) throw new PollyError(400, 'ValidationException', `1 validation error detected: VoiceId '${voiceId}'`);
    if (!(voice.SupportedEngines as string[]).includes(engine))
      throw new PollyError(
        400,
        'EngineNotSupportedException',
        `This voice does not support the selected engine: ${engine}`,
      );
    if (
      languageCode !== undefined &&
      languageCode !== voice.LanguageCode &&
      !voice.AdditionalLanguageCodes?.includes(languageCode)
    )
      throw new PollyError(400, 'LanguageNotSupportedException', `${voiceId} does not speak ${languageCode}.`);
    if (Array.isArray(body.LexiconNames) && body.LexiconNames.length > 0)
      throw new PollyError(404, 'LexiconNotFoundException', `Lexicon not found: ${String(body.LexiconNames[0])}`);
    if (Array.isArray(body.SpeechMarkTypes) && body.SpeechMarkTypes.length > 0 && outputFormat !== 'json')
      throw new PollyError(400, 'MarksNotSupportedForFormatException', 'Speech marks need the json output format.');
    const rates = FORMAT_RATES[outputFormat];
    if (!rates) throw new PollyError(400, 'ValidationException', `The Polly twin does not make ${outputFormat}.`);
    const sampleRate = optional(body, 'SampleRate') ?? (engine === 'neural' ? rates.neural : rates.standard);
    if (!rates.rates.includes(sampleRate))
      throw new PollyError(
        400,
        'InvalidSampleRateException',
        `Sample rate ${sampleRate} is not valid for ${outputFormat}.`,
      );
    if ([...text].length > MAX_TEXT_CHARACTERS)
      throw new PollyError(
        400,
        'TextLengthExceededException',
        `Maximum text length (${MAX_TEXT_CHARACTERS}) exceeded.`,
      );
    let spoken: string;
    try {
      spoken = textType === 'ssml' ? spokenTextOf(text) : text.replace(/\s+/g, ' ').trim();
    } catch (error) {
      if (error instanceof SsmlError) throw new PollyError(400, 'InvalidSsmlException', error.message);
      throw error;
    }
    const billed = [...spoken].length;
    if (billed > MAX_BILLED_CHARACTERS)
      throw new PollyError(
        400,
        'TextLengthExceededException',
        `Maximum billed characters (${MAX_BILLED_CHARACTERS}) exceeded.`,
      );
    const failure = failures.shift();
    if (failure === 'ServiceFailureException')
      throw new PollyError(500, failure, 'An unknown condition has caused a service failure.');
    if (failure) throw new PollyError(400, failure, 'Rate exceeded');
    const format = outputFormat as 'mp3' | 'pcm';
    const audio = await speechAudio(
      { voiceId, engine, spoken, format, sampleRate: Number(sampleRate) },
      options.lamePath ?? 'lame',
    );
    syntheses.push({
      VoiceId: voiceId,
      Engine: engine,
      OutputFormat: outputFormat,
      SampleRate: sampleRate,
      TextType: textType,
      Text: text,
      ...(languageCode === undefined ? {} : { LanguageCode: languageCode }),
      spoken,
      audioSha256: createHash('sha256').update(audio).digest('hex'),
      request: body,
    });
    return { audio, contentType: rates.contentType, billed };
  }

  function control(request: TwinRequest): TwinAnswer {
    if (request.method === 'GET' && request.path === '/control/requests') return json(200, syntheses);
    if (request.method === 'DELETE' && request.path === '/control/requests') {
      twin.reset();
      return { status: 204, body: '' };
    }
    if (request.method === 'POST' && request.path === '/control/failures') {
      let body: { count?: unknown; error?: unknown } = {};
      try {
        body = JSON.parse(request.body.toString('utf8') || '{}') as typeof body;
      } catch {
        return json(400, { error: 'invalid_body' });
      }
      const count = typeof body.count === 'number' && body.count >= 0 && body.count <= 100 ? body.count : 1;
      twin.failNext(count, body.error === 'ThrottlingException' ? 'ThrottlingException' : 'ServiceFailureException');
      return json(200, { failing: failures.length });
    }
    return json(404, { error: 'not_found' });
  }

  async function answer(request: TwinRequest): Promise<TwinAnswer> {
    // TEST CONTROL routes (not AWS's): unsigned.
    if (request.path.startsWith('/control/')) return control(request);
    const fault = signatureFault(request, secrets, options.region);
    if (fault) throw new PollyError(403, fault.code, fault.message);
    if (request.method === 'GET' && request.path === '/v1/voices')
      return describeVoices(new URLSearchParams(request.query));
    if (request.method === 'POST' && request.path === '/v1/speech') {
      const { audio, contentType, billed } = await synthesize(request.body);
      return {
        status: 200,
        headers: { 'content-type': contentType, 'x-amzn-RequestCharacters': String(billed) },
        body: audio,
      };
    }
    throw new PollyError(404, 'UnknownOperationException', 'No such operation.');
  }

  async function serve(req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) {
    let result: TwinAnswer;
    try {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of req as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_BODY_BYTES)
          throw new PollyError(400, 'TextLengthExceededException', 'The request is too large.');
        chunks.push(chunk);
      }
      const [path, query = ''] = (req.url ?? '/').split(/\?(.*)/s);
      result = await answer({
        method: req.method ?? 'GET',
        path: path!,
        query,
        headers: req.headers,
        body: Buffer.concat(chunks),
      });
    } catch (error) {
      result = errorAnswer(
        error instanceof PollyError
          ? error
          : new PollyError(500, 'ServiceFailureException', 'An unknown condition has caused a service failure.'),
      );
    }
    const body = typeof result.body === 'string' ? Buffer.from(result.body) : result.body;
    (res as ServerResponse).writeHead(result.status, {
      'x-amzn-RequestId': randomUUID(),
      'content-length': String(body.length),
      ...result.headers,
    });
    res.end(body);
  }

  const http1 = createHttpServer((req, res) => void serve(req, res));
  const http2 = createHttp2Server((req, res) => void serve(req, res));
  // One port for both: a connection that opens with HTTP/2's preface ("PRI * HTTP/2.0") is HTTP/2 (h2c).
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.once('data', (first: Buffer) => {
      socket.pause();
      socket.unshift(first);
      (first.subarray(0, 3).toString('latin1') === 'PRI' ? http2 : http1).emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
  });

  const twin: PollyTwin = {
    async listen(port, host = '127.0.0.1') {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve());
      });
      return `http://${host}:${(server.address() as AddressInfo).port}`;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
    },
    get syntheses() {
      return syntheses;
    },
    failNext(count, error = 'ServiceFailureException') {
      for (let i = 0; i < count; i++) failures.push(error);
    },
    reset() {
      syntheses.length = 0;
      failures.length = 0;
    },
  };
  return twin;
}
