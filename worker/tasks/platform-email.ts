import type { Task } from 'graphile-worker';
import * as v from 'valibot';
import type { Deps } from '../../src/deps.ts';
import { sendMail } from '../../src/mail/mailer.ts';

const Payload = v.object({
  to: v.string(),
  subject: v.string(),
  text: v.string(),
  link: v.optional(v.string()),
});

/** `platform_email`: sends one message (retried by graphile-worker when the mail server fails). */
export function platformEmailTask(deps: Deps): Task {
  return async (raw, helpers) => {
    const parsed = v.safeParse(Payload, raw);
    if (!parsed.success) {
      helpers.logger.error('platform_email: invalid payload, dropped');
      return;
    }
    try {
      await sendMail(deps, parsed.output);
    } catch (err) {
      // the relay's answer may quote the recipient; the error reaches the process log
      const { to, link } = parsed.output;
      let text = err instanceof Error ? err.message : String(err);
      for (const s of [to, link]) if (s) text = text.split(s).join('<redacted>');
      throw new Error(`could not send mail: ${text}`);
    }
  };
}
