// One-line, actionable failures for the harness itself (missing setup, timeouts), never a bare stack.
export class E2EError extends Error {
  constructor(message) {
    super(message);
    this.name = 'E2EError';
  }
}
