// Runs from an isolated directory where x402-fetch 1.2.x is installed (see check.ts): the legacy v1
// client pays through the gateway exactly as it would pay any x402 server. Prints one JSON line.
import { createSigner, wrapFetchWithPayment } from "x402-fetch";

const signer = await createSigner("base-sepolia", process.env.PAYER_KEY);
const pay = wrapFetchWithPayment(fetch, signer);
const res = await pay(process.env.TARGET_URL, {
  method: "POST",
  headers: { authorization: `Bearer ${process.env.BEARER}`, "content-type": "application/json" },
  body: JSON.stringify({ hello: "legacy" }),
});
console.log(
  JSON.stringify({
    status: res.status,
    body: await res.text(),
    paymentResponse: res.headers.get("x-payment-response"),
  }),
);
