import type { RunningApi } from './api';

const TARGET = { start: 'RUNNING', resume: 'RUNNING', pause: 'PAUSED', stop: 'STOPPED' } as const;

/**
 * POST /campaigns/{id}/{action} as a client does on a loaded machine: a 503 temporal_unavailable (the Update
 * not completed within the API's deadline; it may still apply) is followed by reading the campaign back,
 * and the request sent again only if the campaign did not reach the action's status. Answers the campaign.
 */
export async function transitionCampaign(
  api: RunningApi,
  key: string,
  campaignId: string,
  action: keyof typeof TARGET,
): Promise<{ status: string; statusReason: unknown }> {
  for (let attempt = 0; ; attempt++) {
    const response = await api.request('POST', `/campaigns/${campaignId}/${action}`, { key, body: {} });
    if (response.status === 200) return (await response.json()) as { status: string; statusReason: unknown };
    // Sent again after a 503 whose Update applied meanwhile: refused as from the status it asked for, which is done.
    if (attempt > 0 && response.status === 409) {
      const refusal = (await response.clone().json()) as { from?: string };
      if (refusal.from === TARGET[action])
        return (await (await api.request('GET', `/campaigns/${campaignId}`, { key })).json()) as {
          status: string;
          statusReason: unknown;
        };
    }
    if (response.status !== 503 || attempt === 5)
      throw new Error(`${action}: answered ${response.status} ${await response.text()}`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const current = await api.request('GET', `/campaigns/${campaignId}`, { key });
    const campaign = (await current.json()) as { status: string; statusReason: unknown };
    if (campaign.status === TARGET[action]) return campaign;
  }
}
