import type { NextFunction, Request, Response } from 'express';

/** An Express handler whose thrown errors reach the app's error handler (Express 4 does not catch them itself). */
export const caught =
  (handler: (req: Request, res: Response) => void) => (req: Request, res: Response, next: NextFunction) => {
    try {
      handler(req, res);
    } catch (error) {
      next(error);
    }
  };
