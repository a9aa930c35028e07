"""AgentV 4 eval files: promptfoo's form with AgentV's additions and AgentV's scores."""
