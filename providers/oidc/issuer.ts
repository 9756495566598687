import { badGateway, badRequest, unavailable } from '../../core/errors.ts';

export interface IssuerMetadata {
  issuer: string;
  token_endpoint: string;
  authorization_endpoint?: string;
  jwks_uri?: string;
  userinfo_endpoint?: string;
}

export interface TokenAnswer {
  access_token: string;
  token_type?: string;
  expires_in?: number;
  issued_token_type?: string;
  refresh_token?: string;
  scope?: string;
}

const TIMEOUT_MS = 10_000;

/** The OIDC issuer this provider trusts: its discovery document (read once) and its token endpoint. */
export class Issuer {
  private meta?: Promise<IssuerMetadata>;

  constructor(readonly url: string) {}

  private down(what: string, err: unknown) {
    return unavailable(
      'SB_ERR_IDENTITY_ISSUER_UNAVAILABLE',
      `The OIDC issuer ${this.url} cannot be reached (${what}): ${err instanceof Error ? err.message : String(err)}`,
      err,
    );
  }

  metadata(): Promise<IssuerMetadata> {
    this.meta ??= (async () => {
      let res: Response;
      try {
        res = await fetch(`${this.url.replace(/\/+$/, '')}/.well-known/openid-configuration`, {
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
      } catch (err) {
        throw this.down('discovery', err);
      }
      if (!res.ok)
        throw unavailable(
          'SB_ERR_IDENTITY_ISSUER_UNAVAILABLE',
          `The OIDC issuer ${this.url} answered ${res.status} to its discovery document`,
        );
      const doc = (await res.json()) as Partial<IssuerMetadata>;
      if (typeof doc.token_endpoint !== 'string')
        throw badGateway(
          'SB_ERR_IDENTITY_ISSUER_INVALID',
          `The discovery document of ${this.url} names no token_endpoint`,
        );
      return doc as IssuerMetadata;
    })();
    // A failed discovery is tried again on the next call (the issuer may come back).
    this.meta.catch(() => (this.meta = undefined));
    return this.meta;
  }

  /**
   * POST to the token endpoint with HTTP Basic client authentication. The
   * issuer's own refusal of the grant (invalid_grant, invalid_request) is the
   * caller's to fix: 400 with the issuer's words when `callerFault`, else 502.
   */
  async token(
    endpoint: string | undefined,
    client: { id: string; secret: string },
    form: Record<string, string>,
    callerFault: boolean,
    hint = 'check the subject token and audience',
  ): Promise<TokenAnswer> {
    const url = endpoint ?? (await this.metadata()).token_endpoint;
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          authorization: `Basic ${Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`).toString('base64')}`,
        },
        body: new URLSearchParams(form),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      throw this.down(`token endpoint ${url}`, err);
    }
    const body = (await res.json().catch(() => ({}))) as Partial<TokenAnswer> & {
      error?: string;
      error_description?: string;
    };
    if (!res.ok || typeof body.access_token !== 'string') {
      const why = `${body.error ?? res.status}${body.error_description ? `: ${body.error_description}` : ''}`;
      if (
        callerFault &&
        res.status === 400 &&
        (body.error === 'invalid_grant' || body.error === 'invalid_request' || body.error === 'invalid_target')
      ) {
        throw badRequest(
          'SB_ERR_IDENTITY_TOKEN_REFUSED',
          `The OIDC issuer ${this.url} refused the token request (${why}); ${hint}`,
        );
      }
      throw badGateway(
        'SB_ERR_IDENTITY_ISSUER_REFUSED',
        `The OIDC issuer ${this.url} refused the token request (${why}); check the credential provider's client_id and client_secret`,
      );
    }
    return body as TokenAnswer;
  }
}
