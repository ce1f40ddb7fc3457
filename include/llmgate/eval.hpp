// The evaluation area (job 4): compare candidate models on a product's own
// prompts for quality, latency and cost. An evaluation file names the
// candidates and the prompts; a runner sends them and records everything in
// a run store (SQLite, so a killed run resumes); scorers, LLM judges and
// people rate the answers; a summary and a report say which model to pick.
// Not included by llmgate.hpp: the run store needs SQLite (link SQLite::SQLite3).
#pragma once

#include "llmgate/eval/agreement.hpp"
#include "llmgate/eval/answer_scores.hpp"
#include "llmgate/eval/bleu.hpp"
#include "llmgate/eval/evaluation_cost.hpp"
#include "llmgate/eval/evaluation_file.hpp"
#include "llmgate/eval/evaluation_plan.hpp"
#include "llmgate/eval/evaluation_summary.hpp"
#include "llmgate/eval/gguf_info.hpp"
#include "llmgate/eval/judge.hpp"
#include "llmgate/eval/judge_templates.hpp"
#include "llmgate/eval/judge_verdict.hpp"
#include "llmgate/eval/prompt_rendering.hpp"
#include "llmgate/eval/rating_assignment.hpp"
#include "llmgate/eval/rating_csv.hpp"
#include "llmgate/eval/rating_server.hpp"
#include "llmgate/eval/report.hpp"
#include "llmgate/eval/request_outcome.hpp"
#include "llmgate/eval/results_files.hpp"
#include "llmgate/eval/run_progress.hpp"
#include "llmgate/eval/run_records.hpp"
#include "llmgate/eval/run_store.hpp"
#include "llmgate/eval/runner.hpp"
#include "llmgate/eval/score_tokens.hpp"
#include "llmgate/eval/summarize.hpp"
#include "llmgate/eval/svg_plot.hpp"
#include "llmgate/eval/tfidf.hpp"
