/**
 * A target's printable name: what every line of output says for a target string, so that no
 * password typed into a PostgreSQL URI reaches a terminal, a log file or a program reading JSON.
 *
 * It works on the text as typed (a URI that does not parse is redacted too), and keeps everything
 * but the password, so that an operator recognises the name: `postgres://u:pw@h/db?log=x` is
 * `postgres://u@h/db?log=x`, and `postgresql:///db?host=/s&user=u&password=pw` is
 * `postgresql:///db?host=/s&user=u`. Any other target (a path, `level:`, `memory:`) is its own name.
 *
 * This module imports nothing, so that the target parser and every backend can use it.
 *
 * @module
 */

const URI = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*)/;
/** `postgres:` or `postgresql:` with other than two slashes: no URI, but what follows may still be `user:password@host`. */
const LOOSE_POSTGRES = /^(postgres(?:ql)?:\/?)(?!\/)([^/?#]*)/i;
/** An authority that is a host, with or without a port (`h`, `h:5432`, `[::1]:5432`), rather than a user and the start of a password. */
const HOST = /^(?:\[[^\]]*\]|[^:[\]]*)(?::[0-9]{0,5})?$/;

/**
 * `target` without what may be a password: the `:password` of a URI's user part, and every
 * `password=` query parameter (in any case, percent-encoded or not).
 *
 * A password typed with a `/`, `?` or `#` in it, not percent-encoded, ends the authority early
 * for a URL parser (`postgres://u:pa/ss@h/db`): where the authority then holds a `:` and an `@`
 * follows (before the query, when what is before the `/` reads as a host and port), everything
 * up to the last `@` is taken for the user part. A
 * `password=` value with a `&` in it, likewise, takes the bare words (no `=`) after it with it.
 * Such a target names no log node-postgres can reach; its name is only shown
 * in the error that says so.
 */
export function printableTarget(target: string): string {
  const uri = URI.exec(target) ?? LOOSE_POSTGRES.exec(target);
  if (uri === null) return target;
  const [whole, scheme = '', typed = ''] = uri;
  let authority = typed;
  let rest = target.slice(whole.length);
  const later = rest.lastIndexOf('@');
  const query = rest.indexOf('?');
  // A host and port may be followed by an `@` in the query (`?user=me@corp`), not in the path.
  const cut = HOST.test(authority)
    ? /:[0-9]*$/.test(authority) && later >= 0 && (query < 0 || later < query)
    : later >= 0;
  if (!authority.includes('@') && cut) {
    const host = takeHost(rest.slice(later + 1));
    authority = `${authority}${rest.slice(0, later)}@${host}`;
    rest = rest.slice(later + 1 + host.length);
  }
  // The user part ends at the authority's last `@`, as URL parsers read it.
  const at = authority.lastIndexOf('@');
  let shown = authority;
  if (at >= 0) {
    const userinfo = authority.slice(0, at);
    const colon = userinfo.indexOf(':');
    shown = `${colon >= 0 ? userinfo.slice(0, colon) : userinfo}@${authority.slice(at + 1)}`;
  }
  return `${scheme}${shown}${withoutPasswordParameter(rest)}`;
}

/** The host (and port) at the start of `text`: up to its first `/`, `?` or `#`. */
function takeHost(text: string): string {
  return /^[^/?#]*/.exec(text)?.[0] ?? '';
}

/**
 * The path, query and fragment after a URI's authority, with every `password=` parameter left
 * out, and with it the bare words (no `=`) after it: what a `&` typed in the password cut off it.
 */
function withoutPasswordParameter(rest: string): string {
  const q = rest.indexOf('?');
  if (q < 0) return rest;
  const hash = rest.indexOf('#', q);
  const query = rest.slice(q + 1, hash < 0 ? undefined : hash);
  const kept: string[] = [];
  let inPassword = false;
  for (const pair of query.split('&')) {
    const equals = pair.indexOf('=');
    if (isPasswordKey(equals < 0 ? pair : pair.slice(0, equals))) inPassword = true;
    else if (!inPassword || equals >= 0) {
      inPassword = false;
      kept.push(pair);
    }
  }
  const tail = hash < 0 ? '' : rest.slice(hash);
  return `${rest.slice(0, q)}${kept.length === 0 ? '' : `?${kept.join('&')}`}${tail}`;
}

function isPasswordKey(key: string): boolean {
  let decoded = key;
  try {
    decoded = decodeURIComponent(key.replace(/\+/g, ' '));
  } catch {
    // not percent-encoding: compare it as it is
  }
  return decoded.trim().toLowerCase() === 'password';
}
