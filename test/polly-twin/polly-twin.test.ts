// The Polly twin (simulators/polly-twin/, docs/features/voices.md#the-polly-twin): the official SDK against it, its
// answers and the SDK's requests held to AWS's published Smithy model (vendor/smithy/polly/), its errors, its
// signature check and its SSML reading.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  DescribeVoicesCommand,
  EngineNotSupportedException,
  SynthesizeSpeechCommand,
  type SynthesizeSpeechCommandInput,
} from '@aws-sdk/client-polly';
import { spokenTextOf } from '../../simulators/twin-common/ssml';
import { TWIN_VOICES } from '../../simulators/polly-twin/voices';
import { smithyModel } from '../support/smithy-model';
import { DEVELOPMENT_POLLY_CREDENTIALS, startPollyTwin, TWIN_REGION, twinClient } from '../support/polly-twin';

const polly = smithyModel('polly');
const { twin, endpoint } = await startPollyTwin();
const client = twinClient(endpoint);

const synthesize = async (input: Partial<SynthesizeSpeechCommandInput>) => {
  const answer = await client.send(
    new SynthesizeSpeechCommand({ OutputFormat: 'mp3', VoiceId: 'Joanna', Text: 'Hello there.', ...input }),
  );
  return { answer, audio: Buffer.from(await answer.AudioStream!.transformToByteArray()) };
};

/** The SDK's error for an input, as the test reads it: its name, its status, its message. */
async function failureOf(send: () => Promise<unknown>) {
  try {
    await send();
  } catch (error) {
    const failure = error as Error & { $metadata?: { httpStatusCode?: number } };
    return { name: failure.name, status: failure.$metadata?.httpStatusCode, error: failure };
  }
  throw new Error('expected the request to fail');
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe("AWS's vendored model of Polly", () => {
  it('is the published Smithy model, with its provenance, restJson1 and SigV4, and the two operations the twin speaks', () => {
    expect(polly.model.smithy).toBe('2.0');
    expect(polly.model.metadata['x-vendored']).toMatchObject({
      repository: 'aws/api-models-aws',
      path: 'polly/service/2016-06-10/polly-2016-06-10.json',
    });
    expect(polly.model.metadata['x-vendored']!.commit).toMatch(/^[0-9a-f]{40}$/);
    const service = polly.shapeOf('Parrot_v1');
    expect(service.traits).toHaveProperty(['aws.protocols#restJson1']);
    expect(service.traits?.['aws.auth#sigv4']).toEqual({ name: 'polly' });
    expect(polly.operation('SynthesizeSpeech').http).toEqual({ method: 'POST', uri: '/v1/speech', code: 200 });
    expect(polly.operation('DescribeVoices').http).toEqual({ method: 'GET', uri: '/v1/voices', code: 200 });
  });
});

describe('DescribeVoices', () => {
  it("answers the twin's voices as the model's Voice shapes, filtered by language and engine", async () => {
    const all = await client.send(new DescribeVoicesCommand({}));
    const raw = { Voices: all.Voices };
    expect(polly.bodyProblems(polly.operation('DescribeVoices').output, raw)).toEqual([]);
    expect(all.Voices?.map((voice) => voice.Id)).toEqual(TWIN_VOICES.map((voice) => voice.Id));
    const french = await client.send(new DescribeVoicesCommand({ LanguageCode: 'fr-FR', Engine: 'neural' }));
    expect(french.Voices?.map((voice) => voice.Id)).toEqual(['Lea', 'Remi']);
    expect((await failureOf(() => client.send(new DescribeVoicesCommand({ NextToken: 'x' })))).name).toBe(
      'InvalidNextTokenException',
    );
  });
});

describe('SynthesizeSpeech', () => {
  it('answers deterministic MP3 audio of (voice, text, engine, format), the request as the model describes it', async () => {
    const first = await synthesize({ VoiceId: 'Amy', Engine: 'neural', Text: 'Good morning, Ada.' });
    expect(first.answer.ContentType).toBe('audio/mpeg');
    expect(first.answer.RequestCharacters).toBe('Good morning, Ada.'.length);
    // An MP3: frames (or an ID3/Xing header) from the first bytes.
    expect(first.audio.length).toBeGreaterThan(1000);
    expect(first.audio[0] === 0xff || first.audio.subarray(0, 3).toString() === 'ID3').toBe(true);
    const again = await synthesize({ VoiceId: 'Amy', Engine: 'neural', Text: 'Good morning, Ada.' });
    expect(sha256(again.audio)).toBe(sha256(first.audio));
    for (const other of [
      { VoiceId: 'Brian' as const, Engine: 'neural' as const, Text: 'Good morning, Ada.' },
      { VoiceId: 'Amy' as const, Engine: 'standard' as const, Text: 'Good morning, Ada.' },
      { VoiceId: 'Amy' as const, Engine: 'neural' as const, Text: 'Good evening, Ada.' },
    ])
      expect(sha256((await synthesize(other)).audio), JSON.stringify(other)).not.toBe(sha256(first.audio));

    const received = twin.syntheses.at(-1)!;
    expect(received.audioSha256).toBe(
      sha256((await synthesize({ VoiceId: 'Amy', Engine: 'neural', Text: 'Good evening, Ada.' })).audio),
    );
    for (const synthesis of twin.syntheses)
      expect(polly.bodyProblems(polly.operation('SynthesizeSpeech').input, synthesis.request)).toEqual([]);
  });

  it('answers 16-bit PCM at the sample rate asked, as long as the MP3 says', async () => {
    const { answer, audio } = await synthesize({ OutputFormat: 'pcm', SampleRate: '8000', Text: 'one two' });
    expect(answer.ContentType).toBe('audio/pcm');
    // Two words of three letters: (40 + 180 ms of tone + 50 ms of silence) each, at 8 kHz, 2 bytes a sample.
    expect(audio.length).toBe(2 * 2 * Math.round(8 * 220) + 2 * 2 * Math.round(8 * 50));
  });

  it("refuses as the model's errors, which the SDK reads as its exception classes", async () => {
    const cases: Array<[string, Partial<SynthesizeSpeechCommandInput>]> = [
      ['EngineNotSupportedException', { VoiceId: 'Celine', Engine: 'neural' }],
      ['InvalidSampleRateException', { SampleRate: '44100' }],
      ['InvalidSsmlException', { TextType: 'ssml', Text: '<speak>Fish & chips</speak>' }],
      ['InvalidSsmlException', { TextType: 'ssml', Text: '<speak><audio src="x"/></speak>' }],
      ['LanguageNotSupportedException', { VoiceId: 'Joanna', LanguageCode: 'de-DE' }],
      ['LexiconNotFoundException', { LexiconNames: ['brands'] }],
      ['TextLengthExceededException', { Text: 'a '.repeat(1_600) }],
      ['MarksNotSupportedForFormatException', { SpeechMarkTypes: ['word'] }],
    ];
    const modelled = polly.operation('SynthesizeSpeech').errors;
    for (const [name, input] of cases) {
      const failure = await failureOf(() => synthesize(input));
      expect(modelled, name).toContain(name);
      expect([failure.name, failure.status], JSON.stringify(input)).toEqual([name, polly.errorOf(name).status]);
    }
    const engine = await failureOf(() => synthesize({ VoiceId: 'Celine', Engine: 'neural' }));
    expect(engine.error).toBeInstanceOf(EngineNotSupportedException);

    twin.failNext(1);
    const failed = await failureOf(() => synthesize({}));
    expect([failed.name, failed.status]).toEqual(['ServiceFailureException', 500]);
    expect(polly.errorOf('ServiceFailureException')).toEqual({ status: 500, fault: 'server' });
  });

  it("answers an error as restJson1 carries it: x-amzn-ErrorType and the error shape's body", async () => {
    // The SDK's own request; the raw answer read before its deserializer parses it (and handed on unchanged).
    let raw: { status: number; headers: Record<string, string>; body: Buffer } | undefined;
    const rawClient = twinClient(endpoint);
    rawClient.middlewareStack.add(
      (next) => async (args) => {
        const result = await next(args);
        const response = result.response as { statusCode: number; headers: Record<string, string>; body: Readable };
        const chunks: Buffer[] = [];
        for await (const chunk of response.body) chunks.push(Buffer.from(chunk as Uint8Array));
        raw = { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks) };
        response.body = Readable.from([raw.body]);
        return result;
      },
      { step: 'deserialize', priority: 'low', name: 'readRawAnswer' },
    );
    await failureOf(() =>
      rawClient.send(
        new SynthesizeSpeechCommand({ OutputFormat: 'mp3', VoiceId: 'Celine', Engine: 'neural', Text: 'Bonjour' }),
      ),
    );
    expect(raw!.status).toBe(400);
    expect(raw!.headers['x-amzn-errortype']).toBe('EngineNotSupportedException');
    expect(polly.problems('EngineNotSupportedException', JSON.parse(raw!.body.toString()))).toEqual([]);
  });
});

describe('the signature (SigV4)', () => {
  it('refuses a request without one, with an unknown key, a wrong secret or another region, as AWS does', async () => {
    const unsigned = await fetch(`${endpoint}/v1/voices`);
    expect([unsigned.status, unsigned.headers.get('x-amzn-errortype')]).toEqual([
      403,
      'MissingAuthenticationTokenException',
    ]);
    const send = (credentials: { accessKeyId: string; secretAccessKey: string }, region = TWIN_REGION) =>
      failureOf(() => twinClient(endpoint, credentials, region).send(new DescribeVoicesCommand({})));
    const unknownKey = await send({ ...DEVELOPMENT_POLLY_CREDENTIALS, accessKeyId: 'AKIAUNKNOWNKEY000000' });
    expect([unknownKey.name, unknownKey.status]).toEqual(['UnrecognizedClientException', 403]);
    const wrongSecret = await send({ ...DEVELOPMENT_POLLY_CREDENTIALS, secretAccessKey: 'not-the-secret' });
    expect([wrongSecret.name, wrongSecret.status]).toEqual(['InvalidSignatureException', 403]);
    const otherRegion = await send(DEVELOPMENT_POLLY_CREDENTIALS, 'us-west-2');
    expect([otherRegion.name, otherRegion.status]).toEqual(['InvalidSignatureException', 403]);
  });
});

describe('SSML', () => {
  it('says a <sub> as its alias and a <phoneme> as its pronunciation, entities unescaped', async () => {
    const ssml =
      '<speak>Call <sub alias="Acme Solar">ACS</sub> about <phoneme alphabet="ipa" ph="ˈkɪloʊwɑt">kWh</phoneme> &amp; more.</speak>';
    expect(spokenTextOf(ssml)).toBe('Call Acme Solar about /ˈkɪloʊwɑt/ & more.');
    await synthesize({ VoiceId: 'Joanna', Engine: 'neural', TextType: 'ssml', Text: ssml });
    expect(twin.syntheses.at(-1)!.spoken).toBe('Call Acme Solar about /ˈkɪloʊwɑt/ & more.');
    for (const bad of ['Hello', '<speak>a</speak><speak>b</speak>', '<speak><s>a</speak>', '<speak>a &foo; b</speak>'])
      expect(() => spokenTextOf(bad), bad).toThrow(/Invalid SSML/);
  });
});
