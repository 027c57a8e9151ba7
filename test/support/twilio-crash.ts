import { connectCarrier } from '../../lib/carrier-connections/connections';
import { TWILIO_TWIN_ACCOUNT } from './carrier-calls';
import { carrierCrashFile } from './carrier-crash';
import { twilioTwinRecord } from './twilio-twin';

/**
 * Twin time at a tenth: ringing 0.1 s after the dial, a person answers 0.5 s later and the script walk (opening line,
 * two questions and their answers, the closing) lasts some 2 s; busy after 0.2 s of ringing, no answer after 6 s.
 */
const TIME_SCALE = '0.1';
const TWILIO_ENDED = ['completed', 'busy', 'no-answer', 'failed', 'canceled'];

/**
 * A crash test file on the Twilio path (carrierCrashFile): a twilio-twin connection for `caller`, the Twilio twin as
 * its own process (npm run twilio-twin), the worker told to subscribe ringing and in-progress, `apiEnv` added to the
 * API's environment.
 */
export function twilioCrashFile(caller: string, apiEnv: Record<string, string> = {}) {
  return carrierCrashFile({
    caller,
    connect: (db, keyring, workspaceId, twinUrl) =>
      connectCarrier(db, keyring, {
        workspaceId,
        provider: 'twilio-twin',
        baseUrl: twinUrl,
        account: TWILIO_TWIN_ACCOUNT,
      }),
    twinCallsTo: async (db, phone) =>
      (await twilioTwinRecord(db).calls('"to" = $1 AND "from" = $2', phone, caller)).map((call) => ({
        id: call.sid,
        status: call.status,
        ended: TWILIO_ENDED.includes(call.status),
        endedAt: call.endTime,
      })),
    twin: {
      name: 'twilio twin',
      entry: 'simulators/twilio-twin/main.ts',
      env: (port, delivery) => ({
        TWILIO_TWIN_PORT: String(port),
        TWILIO_TWIN_TIME_SCALE: TIME_SCALE,
        TWILIO_TWIN_CALLBACK_DELIVERY: delivery,
      }),
    },
    workerEnv: { TELEPHONY_STATUS_CALLBACK_EVENTS: 'ringing,in-progress' },
    apiEnv,
  });
}
