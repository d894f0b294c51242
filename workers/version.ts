/** This Worker's version, as `/health` and `hermes-edge status` report it. */
export const VERSION = "0.1.0";
