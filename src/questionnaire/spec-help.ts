/** How each spec flag and prompt answer is written: shared by the --help text and the parsers' error messages. */
import { ENDPOINT_CLASSES, METHODS } from '../answers/choices.js';

export const RATE_HELP = 'a count per period, e.g. 600/minute (periods: second, minute, hour, day)';
/** Endpoint flag: '[name=]METHOD /route CLASS [anonymous]', e.g. 'login=POST /v1/login auth'. */
export const ENDPOINT_SPEC_HELP = `[name=]METHOD /route CLASS [anonymous], e.g. "login=POST /v1/login auth"; METHOD one of ${METHODS.join(', ')}; CLASS one of ${ENDPOINT_CLASSES.join(', ')}`;
/** Plan flag: 'name:RATE[:QUOTA]', e.g. 'free:60/minute:10000'. */
export const PLAN_SPEC_HELP = 'NAME:RATE[:QUOTA], e.g. "free:60/minute:10000" (QUOTA is requests per quota period)';
/** Outbound flag: 'name:RATE', e.g. 'stripe:100/second'. */
export const OUTBOUND_SPEC_HELP = 'NAME:RATE, e.g. "stripe:100/second" (the limit the provider documents for your account)';
/** Fail-mode flag: 'auth=closed,read=open'. */
export const FAIL_MODE_HELP = `CLASS=open|closed pairs, e.g. "auth=closed,read=open,write=open"; CLASS one of ${ENDPOINT_CLASSES.join(', ')}`;
