export * from "./credentials.ts";
export * from "./keyring.ts";
export * from "./oauth/index.ts";
export * from "./open.ts";
export * from "./redact.ts";
export { type CredentialRotation, credentialRepo, type NewCredential } from "./repos/credentials.ts";
export * from "./rewrap.ts";
export * from "./schema.ts";
export * from "./serialize.ts";
