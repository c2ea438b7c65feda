// The one function of the `secp256k1` package the gateway calls (it ships no types): libsecp256k1's
// public key recovery, through the package's prebuilt binding (its JS fallback where none loads).
declare module "secp256k1" {
  const secp256k1: {
    ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean): Uint8Array;
  };
  export default secp256k1;
}
