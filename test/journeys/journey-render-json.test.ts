import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderTemplate } from '../../lib/journeys/render';
import { isJsonBody, renderJsonTemplate } from '../../lib/journeys/render-json';

const INJECTIONS = [
  '", "admin": true, "x": "',
  '"}, {"admin": true',
  '\\", "admin": true, "x": \\"',
  'line\nbreak\t\u2028 and \u0000',
  '{{start.fields.secret}}',
  '</script><script>alert(1)</script>',
];

describe('JSON bodies of webhook nodes (lib/journeys/render-json.ts)', () => {
  it('keeps a lead name that tries to add keys inside its string', () => {
    for (const name of INJECTIONS) {
      const body = renderJsonTemplate('{"name":"{{start.name}}","plan":"{{start.fields.plan}}"}', {
        start: { name, fields: { plan: 'pro', secret: 'S' } },
      });
      expect(JSON.parse(body), name).toEqual({ name, plan: 'pro' });
    }
    // What the text renderer did with the first of them: a new key.
    expect(
      JSON.parse(renderTemplate('{"name":"{{start.name}}"}', { start: { name: INJECTIONS[0] } })) as object,
    ).toHaveProperty('admin', true);
  });

  it('renders a reference outside a string as a JSON value, a missing one as null', () => {
    const variables = { start: { fields: { count: 3, tags: ['a', 'b'], name: 'Ada"} ,"x":{' } }, n3: { ok: true } };
    expect(
      JSON.parse(
        renderJsonTemplate(
          '{"count": {{start.fields.count}}, "tags": {{ start.fields.tags }}, "name": {{start.fields.name}}, "ok": {{n3.ok}}, "gone": {{n9.x?}} }',
          variables,
        ),
      ),
    ).toEqual({ count: 3, tags: ['a', 'b'], name: 'Ada"} ,"x":{', ok: true, gone: null });
    // Inside a string, an object goes in as its JSON text, escaped; a missing value as nothing.
    expect(JSON.parse(renderJsonTemplate('["{{start.fields.tags}}","{{n9.x?}}"]', variables))).toEqual([
      '["a","b"]',
      '',
    ]);
  });

  it('follows escaped quotes in the template and leaves malformed braces as renderTemplate does', () => {
    const variables = { start: { name: 'A"B' } };
    expect(renderJsonTemplate('{"q":"say \\"{{start.name}}\\"", "n": {{start.name}} }', variables)).toBe(
      '{"q":"say \\"A\\"B\\"", "n": "A\\"B" }',
    );
    for (const template of ['{{{start.name}}}', '{{start.name}', '"{{start.name}}}"'])
      expect(renderJsonTemplate(template, variables), template).toBe(renderTemplate(template, variables));
  });

  it('decides what is a JSON body by its Content-Type, else by its first character', () => {
    expect(isJsonBody(undefined, '  {"a":1}')).toBe(true);
    expect(isJsonBody({}, '[1]')).toBe(true);
    expect(isJsonBody(undefined, 'plan={{start.fields.plan}}')).toBe(false);
    expect(isJsonBody({ 'Content-Type': 'application/json; charset=utf-8' }, 'x')).toBe(true);
    expect(isJsonBody({ 'content-type': 'application/vnd.api+json' }, 'x')).toBe(true);
    expect(isJsonBody({ 'CONTENT-TYPE': 'text/plain' }, '{"a":1}')).toBe(false);
    expect(isJsonBody({ 'content-type': 'application/x-www-form-urlencoded' }, '{')).toBe(false);
  });

  it('gives a document with exactly the template’s keys whatever the values (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)), (name, extra) => {
        const body = renderJsonTemplate('{"name":"{{start.name}}","extra":{{start.fields.extra}},"n":1}', {
          start: { name, fields: { extra } },
        });
        expect(JSON.parse(body)).toEqual({ name, extra, n: 1 });
      }),
    );
  });

  it('renders a 64 KiB hostile template and 64 KiB values within its budget (linear in the template)', () => {
    const cases = [
      '{{'.repeat(32 * 1024),
      `"${'{{ '.repeat(21 * 1024)}"`,
      `{{${'a'.repeat(64 * 1024 - 4)}`,
      '{{start.name}}'.repeat(Math.floor((64 * 1024) / 14)),
      '"\\'.repeat(32 * 1024),
    ];
    // Values stay short here: how large a rendered body may grow is the lead fields' cap, not the scan's.
    const variables = { start: { name: '"\\'.repeat(16) } };
    for (const template of cases) {
      const started = performance.now();
      renderJsonTemplate(template, variables);
      // Budget: 200 ms on a loaded 2-CPU machine; the scan is one pass.
      expect(performance.now() - started, template.slice(0, 20)).toBeLessThan(200);
    }
  });
});
