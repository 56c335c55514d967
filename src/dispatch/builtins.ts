// Tools this server answers in process: rows of kind `builtin` whose name is here. Their CODE cell
// documents what they do; the runner never executes a CODE cell.
export const builtins: Record<string, (args: Record<string, unknown>) => unknown> = {
  /** Answers with the arguments it was given, unchanged. */
  ECHO: (args) => args,
};
