import type { RunSql } from '../run-sql';
import { holdIn, settleHold } from './holds';
import type { CreditActor, CreditStore } from './ledger-store';
import { creditString } from './money';
import { recordingAnalysisPriceUnits } from './price-table';
import { SPEECH_CALL_REFERENCE } from '../speech/speech-analysis';

/**
 * How a recording analysis is billed (docs/features/credits.md, docs/features/speech.md): a hold of the price of one
 * analysis when the API records the upload, posted at that price when the analysis is stored, voided
 * when it fails (a refused recording, a recogniser that keeps failing, an analysis deleted or abandoned).
 */
export const speechAnalysisHoldKey = (speechCallId: string) => `recording_analysis:${speechCallId}`;

/** Takes the analysis's hold inside the transaction that records the upload; InsufficientCreditsError: not recorded. */
export function holdSpeechAnalysis(
  sql: RunSql,
  analysis: { workspaceId: string; speechCallId: string },
  actor: CreditActor,
) {
  return holdIn(sql, {
    workspaceId: analysis.workspaceId,
    heldFor: 'recording_analysis',
    amount: creditString(recordingAnalysisPriceUnits()),
    reference: { type: SPEECH_CALL_REFERENCE, id: analysis.speechCallId },
    actor,
    idempotencyKey: speechAnalysisHoldKey(analysis.speechCallId),
  });
}

/**
 * Settles an analysis's hold: posted with the price when it completed, voided otherwise. Idempotent, as
 * postHold and voidHold; an analysis without a hold (none was taken) is left alone (null).
 */
export function settleSpeechAnalysisHold(
  store: CreditStore,
  analysis: { workspaceId: string; speechCallId: string; completed: boolean },
  actor: CreditActor,
) {
  const request = {
    workspaceId: analysis.workspaceId,
    idempotencyKey: speechAnalysisHoldKey(analysis.speechCallId),
    actor,
  };
  return settleHold(store, request, () => (analysis.completed ? recordingAnalysisPriceUnits() : 0));
}
