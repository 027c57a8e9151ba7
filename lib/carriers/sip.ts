/**
 * Why a failed call failed, from the SIP response code a carrier reports with it (Twilio's SipResponseCode, Telnyx's
 * sip_hangup_cause): 404 (not found), 410 (gone), 484 (address incomplete) and 604 (does not exist anywhere) mean the
 * number does not exist: invalid_number; any other is the carrier's error.
 */
export function failureReasonOfSip(sipResponseCode: string | number | null | undefined): string {
  return ['404', '410', '484', '604'].includes(String(sipResponseCode ?? '')) ? 'invalid_number' : 'carrier_error';
}
