/**
 * A request the operator got wrong (unknown account, bad amount): its
 * message is the one line the CLI prints, and the console's 4xx (`kind`:
 * 404 not_found, 409 conflict, else 400). A leaf.
 */
export type OperatorErrorKind = 'invalid' | 'not_found' | 'conflict'

export class OperatorError extends Error {
  constructor(
    message: string,
    readonly kind: OperatorErrorKind = 'invalid',
  ) {
    super(message)
  }
}
