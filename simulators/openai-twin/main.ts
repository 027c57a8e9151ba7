// `npm run openai-twin`: the local twin of OpenAI's chat completions as its own process
// (docs/features/conversation/model-engine.md#running-the-openai-twin). It needs no database: its model is rules, its state a test's
// scripted replies.
import { handleStopSignals } from '../../lib/shutdown';
import { twinProcessSettingsOrExit } from '../twin-common/config';
import { loadOpenAiTwinConfigOrExit } from './config';
import { createOpenAiTwin } from './server';

const stopConfig = twinProcessSettingsOrExit();
const twinConfig = loadOpenAiTwinConfigOrExit();
// SIGTERM/SIGINT run the steps deferred below within SHUTDOWN_GRACE_MS (docs/operations-stopping.md).
const stop = handleStopSignals({ graceMs: stopConfig.SHUTDOWN_GRACE_MS });
const twin = createOpenAiTwin({
  apiKeys: twinConfig.OPENAI_TWIN_API_KEYS,
  firstTokenMs: twinConfig.OPENAI_TWIN_FIRST_TOKEN_MS,
  chunkMs: twinConfig.OPENAI_TWIN_CHUNK_MS,
});
stop.defer('openai twin', () => twin.close());
const url = await twin.listen(twinConfig.OPENAI_TWIN_PORT, twinConfig.OPENAI_TWIN_HOST);
console.log(
  `openai twin listening on ${url} (${twinConfig.OPENAI_TWIN_API_KEYS.length} key(s), first token after ${twinConfig.OPENAI_TWIN_FIRST_TOKEN_MS} ms)`,
);
