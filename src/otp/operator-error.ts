/** A request the operator got wrong (unknown account, bad amount): its message is the one line the CLI prints, and the console's 4xx. A leaf. */
export class OperatorError extends Error {}
