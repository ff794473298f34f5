/** A database operation refused for a reason the operator must fix (a path, a permission, the secret, a newer schema); its message is the one line the CLI shows. */
export class StoreRefusedError extends Error {}
