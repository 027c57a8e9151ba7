import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';

/**
 * The twin's speech: not a voice, but audio that is a function of (voice, engine, words, format, sample rate) and
 * nothing else, so that two requests alike get the same bytes and a test can tell one voice's audio from another's.
 * Each word is a tone (its pitch from a hash of the voice, the engine and the word; its length from the word's)
 * followed by a short silence; 16-bit mono PCM at the sample rate, encoded to MP3 by the lame program for `mp3`.
 */
export interface SpeechRequest {
  voiceId: string;
  engine: string;
  /** The words spoken (SSML already read: ssml.ts). */
  spoken: string;
  format: 'mp3' | 'pcm';
  sampleRate: number;
}

const SILENCE_MS = 50;
const AMPLITUDE = 8_000;

function tonesOf(request: SpeechRequest): Buffer {
  const words = request.spoken.split(/\s+/).filter((word) => word !== '');
  const chunks: Buffer[] = [];
  for (const word of words) {
    const digest = createHash('sha256')
      .update(JSON.stringify([request.voiceId, request.engine, word]))
      .digest();
    const frequency = 180 + (digest.readUInt16BE(0) % 300);
    const toneMs = 40 + 60 * Math.min([...word].length, 12);
    const toneSamples = Math.round((request.sampleRate * toneMs) / 1000);
    const silenceSamples = Math.round((request.sampleRate * SILENCE_MS) / 1000);
    const chunk = Buffer.alloc((toneSamples + silenceSamples) * 2);
    for (let i = 0; i < toneSamples; i++)
      chunk.writeInt16LE(Math.round(AMPLITUDE * Math.sin((2 * Math.PI * frequency * i) / request.sampleRate)), i * 2);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The lame program's MP3 of 16-bit mono PCM: a fixed bit rate, so the same input gives the same bytes. */
function encodeMp3(lamePath: string, pcm: Buffer, sampleRate: number, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const args = ['--quiet', '-r', '-s', String(sampleRate / 1000), '--bitwidth', '16', '--signed', '--little-endian'];
    const child = spawn(lamePath, [...args, '-m', 'm', '-b', '48', '-', '-'], {
      stdio: ['pipe', 'pipe', 'ignore'],
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
    });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) =>
      code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`lame ended ${signal ?? code}`)),
    );
    child.stdin.on('error', () => {});
    child.stdin.end(pcm);
  });
}

export async function speechAudio(request: SpeechRequest, lamePath: string, timeoutMs = 20_000): Promise<Buffer> {
  const pcm = tonesOf(request);
  return request.format === 'pcm' ? pcm : encodeMp3(lamePath, pcm, request.sampleRate, timeoutMs);
}
