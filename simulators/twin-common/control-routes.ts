import type { Express, NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import { personaScriptSchema, type PersonaScript } from '../twilio-twin/persona';

/** An E.164 number, as both carriers take it. */
export const E164 = /^\+[1-9]\d{6,14}$/;

/**
 * The twins' TEST CONTROL routes, not a carrier's: `POST /control/personas` scripts what a number answers,
 * `DELETE /control/personas/{number}` forgets it, and `GET /control/calls/{id}/log` reads what each side of a call
 * said (`callLog` answers the call's record, or null when the twin has no such call: 404).
 */
export function addTwinControlRoutes(
  app: Express,
  personas: Map<string, PersonaScript>,
  callLog: (id: string) => Promise<Record<string, unknown> | null>,
): void {
  app.post('/control/personas', (req, res) => {
    const parsed = personaScriptSchema.extend({ number: z.string().regex(E164) }).safeParse(req.body);
    if (!parsed.success) {
      res.status(400).json({ error: 'invalid_body', issues: parsed.error.issues });
      return;
    }
    const { number, ...script } = parsed.data;
    personas.set(number, script);
    res.json({ number, ...script });
  });
  app.delete('/control/personas/:number', (req, res) => {
    personas.delete(String(req.params.number));
    res.status(204).end();
  });
  app.get('/control/calls/:id/log', (req: Request, res: Response, next: NextFunction) => {
    callLog(String(req.params.id))
      .then((log) => {
        if (log) res.json(log);
        else res.status(404).json({ error: 'call_not_found' });
      })
      .catch(next);
  });
}
