// Kept for consumer/reads.ts only (another change is restructuring that folder): the paging of the
// lists lives in the subgraph kit and lists/paging.ts. Remove once consumer imports those.
export { afterCursor as decodeCursor, cursorOf } from '../lists/paging';
