/** A target's printable name (`lib/printable.ts`): every password left out, the rest as typed. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { printableTarget } from '../lib/printable.js';

const cases: [string, string][] = [
  ['postgres://u:s3cret@db.example/ledgers?log=honcho', 'postgres://u@db.example/ledgers?log=honcho'],
  ['postgresql://u:s3cret@h:5433/db', 'postgresql://u@h:5433/db'],
  ['POSTGRES://u:s3cret@h/db', 'POSTGRES://u@h/db'],
  ['postgres://:s3cret@h/db', 'postgres://@h/db'],
  ['postgres://u:s3c@ret@h/db', 'postgres://u@h/db'],
  ['postgres://u:s3c%40ret@h/db', 'postgres://u@h/db'],
  ['postgresql:///db?host=/run/pg&user=u&password=s3cret', 'postgresql:///db?host=/run/pg&user=u'],
  ['postgresql:///db?password=s3cret&host=/run/pg', 'postgresql:///db?host=/run/pg'],
  ['postgresql:///db?password=s3cret', 'postgresql:///db'],
  ['postgresql:///db?PassWord=s3cret&log=x', 'postgresql:///db?log=x'],
  ['postgresql:///db?pass%77ord=s3cret&log=x', 'postgresql:///db?log=x'],
  ['postgresql:///db?password=a&password=b#frag', 'postgresql:///db#frag'],
  ['postgres://u:s3cret@h/db?password=other&log=x', 'postgres://u@h/db?log=x'],
  ['postgres://u@h/db?log=x', 'postgres://u@h/db?log=x'],
  ['postgres://u:s3cret@[not a uri', 'postgres://u@[not a uri'],
  // a password with / ? # in it, not percent-encoded: the authority ends early for a URL parser
  ['postgres://u:pa/s3cret@h/db?log=x', 'postgres://u@h/db?log=x'],
  ['postgres://u:pa?s3cret@h/db', 'postgres://u@h/db'],
  ['postgres://u:pa#s3cret@h:5432/db', 'postgres://u@h:5432/db'],
  ['postgres://u:12/s3cret@h/db', 'postgres://u@h/db'],
  ['postgres://u:pa/s3c@ret@h/db?user=me@corp', 'postgres://u@corp'],
  ['postgres://h:5432/db?user=me@corp&log=x', 'postgres://h:5432/db?user=me@corp&log=x'],
  ['postgres://[::1]:5432/db?user=me@corp', 'postgres://[::1]:5432/db?user=me@corp'],
  ['postgres://h/db@x', 'postgres://h/db@x'],
  // a password with & in it, not percent-encoded
  ['postgresql:///db?password=pa&s3cret&user=u', 'postgresql:///db?user=u'],
  // postgres: without its two slashes
  ['postgres:u:s3cret@h/db', 'postgres:u@h/db'],
  ['PostgreSQL:/u:s3cret@h/db', 'PostgreSQL:/u@h/db'],
  ['level:/tmp/folder', 'level:/tmp/folder'],
  ['memory:', 'memory:'],
  ['memory/honcho.jsonl', 'memory/honcho.jsonl'],
  ['jsonl:./a@b:c', 'jsonl:./a@b:c'],
];

for (const [typed, shown] of cases) {
  test(`printable: ${typed}`, () => {
    assert.is(printableTarget(typed), shown);
    assert.is(printableTarget(shown), shown, 'a printable name is its own');
    assert.not.ok(printableTarget(typed).includes('s3cret'));
  });
}

test.run();
