// Problems as FORMAT.md names them: a code, where it was found, and a message.

export class Problem {
  constructor(where, code, message) {
    this.where = where;
    this.code = code;
    this.message = message;
  }
}

// Stop reading at once: the bundle is rejected with these problems.
export class Rejected extends Error {
  constructor(headline, problems) {
    super(headline);
    this.problems = problems;
  }
}

export function reject(code, where, message) {
  return new Rejected(message, [new Problem(where, code, message)]);
}

// A mistake in how the verifier was called (exit 2).
export class UsageError extends Error {}
