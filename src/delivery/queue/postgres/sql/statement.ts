/** A named prepared statement of the hot path: its text and the name sessions cache its plan under. */
export interface PreparedStatement {
  name: string;
  text: string;
}
