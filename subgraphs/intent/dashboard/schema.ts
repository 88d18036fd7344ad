// Kept for consumer/schema.ts only (another change is restructuring that folder): the page classes
// live in lists/pages.ts. Remove once consumer imports them from there.
export { IntentPageInfo, PageArgs } from '../lists/pages';
