// Whether a process id is alive, for the components that take over state left by a crashed
// owner (embedded PostgreSQL, devnet chains). EPERM means it exists under another user.
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
