// The service's clock: the system time. Components take a clock function so that tests can inject
// their own; code that must know whether it runs on this one compares with it (the decision thread,
// which cannot call a function of another thread, reads its own system clock only then).
export const systemClock = (): Date => new Date();
