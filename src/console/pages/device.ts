import { html } from 'hono/html';
import type { ConsolePage } from '../layout.ts';

/** Approving the code `platform login` shows. */
export const devicePage: ConsolePage = {
  id: 'device',
  path: '/device',
  title: 'Log in a device',
  signedIn: false,
  narrow: true,
  body: () => html`<div class="card"><form id="code-form">
<label for="user_code">Code shown in your terminal</label>
<input id="user_code" name="user_code" required autocomplete="off" autocapitalize="characters" spellcheck="false" placeholder="XXXX-XXXX" maxlength="9">
<button type="submit">Continue</button>
</form>
<section id="request" hidden aria-labelledby="request-title">
<h2 id="request-title" tabindex="-1">Allow “<span id="client"></span>” to use your account?</h2>
<p>This request started <time id="started"></time> from <code id="address"></code>. The name is what the program calls itself; the address is where its request came from.</p>
<p class="secret-once"><strong>Only approve a code you started yourself.</strong> If someone sent you this code or link, deny it: approving gives them access to your account.</p>
<p>It gets an API key of its own, which you can revoke any time. Code <code id="shown-code"></code>, valid until <time id="expires"></time>.</p>
<label for="account">Account it works in by default</label>
<select id="account"></select>
<div class="actions"><button id="approve" type="button">Approve</button><button id="deny" type="button" class="secondary">Deny</button></div>
</section></div>`,
};
