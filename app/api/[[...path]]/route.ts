import { unknownPath } from '@/lib/http/unrouted';

/**
 * Any /api path no other route serves (Next prefers every static or dynamic route to a
 * catch-all): a 404 in the API's error shape, where Next would send its HTML 404 page.
 */
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = unknownPath();
