"""The grader's Django side (Evaluation model, jobs) around the plain engine package."""
