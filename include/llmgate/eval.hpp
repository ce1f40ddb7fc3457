// The evaluation area (job 4): compare candidate models on a product's own
// prompts for quality, latency and cost. An evaluation file names the
// candidates and the prompts; a runner sends them and records everything in
// a run store (SQLite, so a killed run resumes); scorers, LLM judges and
// people rate the answers; a summary and a report say which model to pick.
// Not included by llmgate.hpp: the run store needs SQLite (link SQLite::SQLite3).
#pragma once

#include "llmgate/eval/evaluation_file.hpp"
#include "llmgate/eval/evaluation_plan.hpp"
#include "llmgate/eval/evaluation_summary.hpp"
#include "llmgate/eval/run_records.hpp"
#include "llmgate/eval/run_store.hpp"
