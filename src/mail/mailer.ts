/**
 * The one mailer. With SMTP_URL it sends through nodemailer; without it, messages go to the
 * development outbox (a Postgres table) and the log line carries the text, so a developer can
 * follow links without a mail server. Messages are sent from the `platform_email` job.
 */
import { createTransport, type Transporter } from 'nodemailer';
import type { Deps } from '../deps.ts';

/** `link`, when the message exists to carry one, is printed on its own line in development. */
export type Mail = { to: string; subject: string; text: string; link?: string };

const NOT_KEPT = '(the link: printed once in the terminal, not stored)';

let transport: { url: string; t: Transporter } | undefined;

export async function sendMail(deps: Deps, mail: Mail): Promise<void> {
  const url = deps.config.mail.smtpUrl;
  if (url) {
    if (transport?.url !== url) transport = { url, t: createTransport(url) };
    await transport.t.sendMail({
      from: deps.config.mail.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
    });
    return;
  }
  // the outbox and the log keep the message without its link: a link is a way in, shown once below
  const kept = mail.link ? mail.text.split(mail.link).join(NOT_KEPT) : mail.text;
  await deps.db
    .insertInto('dev_outbox')
    .values({ to_address: mail.to, subject: mail.subject, body: kept })
    .execute();
  deps.log.info('mail (development outbox; set SMTP_URL to send it)', {
    to: mail.to,
    subject: mail.subject,
    text: kept,
  });
  // With no mail server, the link is what a developer needs: print it where a terminal makes it clickable.
  if (mail.link && deps.config.logLevel !== 'silent')
    process.stderr.write(
      `\n  ${mail.subject} (${mail.to}); no SMTP_URL is set, so open it from here:\n  ${mail.link}\n\n`,
    );
}
