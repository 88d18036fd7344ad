// Sign-in for end-to-end tests: the same wallet client the demo uses (devnet/agents/signIn.ts).
export * from '../../devnet/agents/signIn';
