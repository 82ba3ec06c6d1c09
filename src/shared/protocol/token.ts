// A token as both panels' protocols carry it: the piece, its place in the source text, and whether the model
// added it. A leaf: the token layout, the alignment and every protocol file import it, and it imports nothing.

export interface ProtocolToken {
  i: number;
  text: string;
  /** [start, end) in UTF-16 units of the text sent with the tokens; specials have start === end. */
  start: number;
  end: number;
  special: boolean;
}
