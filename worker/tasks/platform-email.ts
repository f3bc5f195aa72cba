import type { Task } from 'graphile-worker';
import * as v from 'valibot';
import type { Deps } from '../../src/deps.ts';
import { LINK_SLOT, mintLink } from '../../src/mail/links.ts';
import { sendMail } from '../../src/mail/mailer.ts';

const Payload = v.object({
  to: v.string(),
  subject: v.string(),
  text: v.string(),
  link: v.optional(
    v.union([
      v.object({
        table: v.picklist(['email_auth_tokens', 'app_email_verifications']),
        id: v.string(),
        base: v.string(),
      }),
      // queued by a version that put the link itself in the job
      v.string(),
    ]),
  ),
});

/**
 * `platform_email`: sends one message, making its link's token as it sends (src/mail/links.ts).
 * A mail server that fails is retried by graphile-worker; after the last attempt the job is
 * dropped with an error line rather than kept: a failed message is not worth keeping its address.
 */
export function platformEmailTask(deps: Deps): Task {
  return async (raw, helpers) => {
    const parsed = v.safeParse(Payload, raw);
    if (!parsed.success) {
      helpers.logger.error('platform_email: invalid payload, dropped');
      return;
    }
    const { to, subject, link: ref } = parsed.output;
    let { text } = parsed.output;
    let link: string | undefined;
    if (typeof ref === 'string') link = ref;
    else if (ref) {
      const minted = await mintLink(deps.db, ref);
      if (!minted) {
        deps.log.info('mail not sent: its link was used or expired first', { subject });
        return;
      }
      link = minted;
      text = text.split(LINK_SLOT).join(minted);
    }
    try {
      await sendMail(deps, { to, subject, text, link });
    } catch (err) {
      // the relay's answer may quote the recipient; the error reaches the process log
      let message = err instanceof Error ? err.message : String(err);
      for (const s of [to, link]) if (s) message = message.split(s).join('<redacted>');
      if (helpers.job.attempts >= helpers.job.max_attempts) {
        deps.log.error('mail could not be sent; given up after the last attempt', {
          subject,
          attempts: helpers.job.attempts,
          error: message,
        });
        return;
      }
      throw new Error(`could not send mail: ${message}`);
    }
  };
}
