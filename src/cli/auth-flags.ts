/**
 * The OAuth flags as the argument parser sees them. A leaf, so that parsing a command line does not
 * load the OAuth option building and sign-in code behind them.
 */

/** The OAuth flags, merged into the CLI's option table. */
export const AUTH_FLAGS = {
  "no-oauth": { type: "boolean" },
  "stored-auth-only": { type: "boolean" },
  "client-id": { type: "string" },
  "client-secret-env": { type: "string" },
  "client-key-file": { type: "string" },
  grant: { type: "string" },
  scope: { type: "string" },
  "assertion-file": { type: "string" },
  "assertion-env": { type: "string" },
  "idp-token-endpoint": { type: "string" },
  "idp-client-id": { type: "string" },
  "idp-client-secret-env": { type: "string" },
  dpop: { type: "boolean" },
  "application-type": { type: "string" },
} as const;

export interface AuthFlagValues {
  "no-oauth"?: boolean;
  "stored-auth-only"?: boolean;
  "client-id"?: string;
  "client-secret-env"?: string;
  "client-key-file"?: string;
  grant?: string;
  scope?: string;
  "assertion-file"?: string;
  "assertion-env"?: string;
  "idp-token-endpoint"?: string;
  "idp-client-id"?: string;
  "idp-client-secret-env"?: string;
  dpop?: boolean;
  "application-type"?: string;
}
