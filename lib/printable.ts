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

/**
 * `target` without what may be a password: the `:password` of a URI's user part, and every
 * `password=` query parameter (in any case, percent-encoded or not).
 */
export function printableTarget(target: string): string {
  const uri = URI.exec(target);
  if (uri === null) return target;
  const [whole, scheme = '', authority = ''] = uri;
  // The user part ends at the authority's last `@`, as URL parsers read it.
  const at = authority.lastIndexOf('@');
  let shown = authority;
  if (at >= 0) {
    const userinfo = authority.slice(0, at);
    const colon = userinfo.indexOf(':');
    shown = `${colon >= 0 ? userinfo.slice(0, colon) : userinfo}@${authority.slice(at + 1)}`;
  }
  const rest = target.slice(whole.length);
  return `${scheme}${shown}${withoutPasswordParameter(rest)}`;
}

/** The path, query and fragment after a URI's authority, with every `password=` parameter left out. */
function withoutPasswordParameter(rest: string): string {
  const q = rest.indexOf('?');
  if (q < 0) return rest;
  const hash = rest.indexOf('#', q);
  const query = rest.slice(q + 1, hash < 0 ? undefined : hash);
  const kept = query.split('&').filter((pair) => !isPasswordKey(pair.split('=', 1)[0] ?? ''));
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
