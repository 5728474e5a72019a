//! The agent runtime on top of the store: AgentSession (tool registry, model state, system prompt,
//! compaction controller) and prepare-for-run normalisation. Filled by the agent-session issue.
#![warn(missing_docs)]
