// Verifies signed calls with the Standard Webhooks reference library, for
// recur's tests. Each line on stdin is a call to verify, as JSON:
// {"secret": "whsec_...", "headers": {"webhook-id": ...}, "body": base64,
// "now": Unix seconds}; each line on stdout is the library's verdict:
// {"ok": true} or {"ok": false, "error": its message}. "now" is the time
// the library takes for the present (Date.now), so that a call can be
// verified as if it arrived later: replayed.
"use strict";
const { Webhook } = require("standardwebhooks");
const readline = require("readline");

const realNow = Date.now;
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const call = JSON.parse(line);
  let verdict = { ok: true };
  Date.now = () => call.now * 1000;
  try {
    new Webhook(call.secret).verify(Buffer.from(call.body, "base64"), call.headers, { jsonParse: false });
  } catch (e) {
    verdict = { ok: false, error: String((e && e.message) || e) };
  } finally {
    Date.now = realNow;
  }
  process.stdout.write(JSON.stringify(verdict) + "\n");
});
