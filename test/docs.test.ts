import { describe, expect, it } from 'vitest';
import { startTestApi } from './support/api';
import { useChromium } from './support/browser';
import { useTestDatabase } from './support/database';
import { useTemporalClient } from './support/temporal';

const { db, url } = await useTestDatabase();
const api = await startTestApi({ db, url, temporal: await useTemporalClient() });
const browser = await useChromium();

describe('GET /docs', () => {
  it('serves an HTML page without a key, described as text/html in the OpenAPI description', async () => {
    const response = await api.request('GET', '/docs');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await response.text()).toContain('spec-url="/v1/openapi.json"');
    const document = (await (await api.request('GET', '/v1/openapi.json')).json()) as { paths: Record<string, any> };
    expect(Object.keys(document.paths['/docs'].get.responses['200'].content)).toEqual(['text/html']);
    expect(document.paths['/docs'].get.security).toEqual([]);
  });

  it('renders the API reference in a real browser with no host but this one, and finds an operation in it', async () => {
    const page = await browser.newPage();
    const own = (address: string) => address.startsWith(`${api.baseUrl}/`) || /^(data|blob):/.test(address);
    // As on a network that reaches no CDN: any other host is unreachable.
    await page.route(
      (address) => !own(address.href),
      (route) => route.abort(),
    );
    const elsewhere: string[] = [];
    const pageErrors: string[] = [];
    page.on('requestfailed', (request) => {
      // Refused by the page's own Content-Security-Policy: never left the browser.
      if (!own(request.url()) && request.failure()?.errorText !== 'csp') elsewhere.push(request.url());
    });
    page.on('requestfinished', (request) => {
      if (!own(request.url())) elsewhere.push(request.url());
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));

    await page.goto(`${api.baseUrl}/docs`);
    // Rendered from /v1/openapi.json: the operation's summary, method and path.
    const createCampaign = page.locator('[id="operation/postCampaigns"]');
    await createCampaign.waitFor({ timeout: 30_000 });
    expect(await createCampaign.innerText()).toMatch(/Create a campaign[^]*POST\s*\/campaigns/);
    // And browsable: the search box finds it and opens it.
    await page.getByPlaceholder('Search...').fill('Create a campaign');
    await page.locator('[role="search"] [role="menuitem"]').filter({ hasText: 'Create a campaign' }).first().click();
    await expect
      .poll(() => page.url(), { timeout: 10_000 })
      .toMatch(/\/docs#tag\/Campaigns\/operation\/postCampaigns$/);

    expect(pageErrors).toEqual([]);
    expect(elsewhere).toEqual([]);
    await page.close();
  });
});
