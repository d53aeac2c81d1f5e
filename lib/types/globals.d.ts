// ES2024's String.prototype.isWellFormed, which Node.js 20 has; TypeScript's lib for it would
// also declare what Node.js 20 lacks.
interface String {
  /** Whether the string has no lone surrogate, so that it can be written as UTF-8. */
  isWellFormed(): boolean;
}
