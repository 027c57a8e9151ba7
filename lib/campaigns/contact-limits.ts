/** The most contacts one request adds (spec section 8); an Admin API import of a store lists at most as many. */
export const MAX_CONTACTS = 10_000;
