// `tsx scripts/make-platform-audio.ts` (npm start, npm test) or `node dist/scripts/make-platform-audio.js` (the
// Docker image's build): makes the platform's background audio in BACKGROUND_AUDIO_DIR with sox. Idempotent: a
// file with its recipe's content key is kept. The API makes a missing one on first use with the same code.
import path from 'node:path';
import { PLATFORM_BACKGROUND_AUDIO } from '../lib/background-audio/platform-assets';
import { platformAudioFile } from '../lib/background-audio/platform-files';
import { configVariables } from '../lib/config';

const config = configVariables
  .pick({ BACKGROUND_AUDIO_DIR: true, SOX_PATH: true, AUDIO_DECODE_TIMEOUT_MS: true })
  .parse(process.env);
const options = {
  dir: path.resolve(config.BACKGROUND_AUDIO_DIR),
  soxPath: config.SOX_PATH,
  timeoutMs: config.AUDIO_DECODE_TIMEOUT_MS,
};
for (const asset of PLATFORM_BACKGROUND_AUDIO) {
  const file = await platformAudioFile(options, asset);
  const what = file.made ? 'made' : 'already there';
  process.stdout.write(`background audio ${asset.slug}: ${what}, ${file.durationSecs} s (${file.path})\n`);
}
