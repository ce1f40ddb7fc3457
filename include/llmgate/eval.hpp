// The evaluation area (job 4): compare candidate models on a product's own
// prompts for quality, latency and cost. An evaluation file names the
// candidates and the prompts; a runner sends them and records everything in
// a run store (SQLite, so a killed run resumes); scorers, LLM judges and
// people rate the answers; a summary and a report say which model to pick.
// Not included by llmgate.hpp: the run store needs SQLite (link SQLite::SQLite3).
#pragma once

#include "llmgate/eval/score/agreement.hpp"
#include "llmgate/eval/score/answer_scores.hpp"
#include "llmgate/eval/score/bleu.hpp"
#include "llmgate/eval/report/evaluation_cost.hpp"
#include "llmgate/eval/plan/evaluation_file.hpp"
#include "llmgate/eval/plan/evaluation_plan.hpp"
#include "llmgate/eval/report/evaluation_summary.hpp"
#include "llmgate/eval/plan/gguf_info.hpp"
#include "llmgate/eval/score/judge.hpp"
#include "llmgate/eval/score/judge_templates.hpp"
#include "llmgate/eval/score/judge_verdict.hpp"
#include "llmgate/eval/plan/prompt_rendering.hpp"
#include "llmgate/eval/rate/rating_assignment.hpp"
#include "llmgate/eval/rate/rating_csv.hpp"
#include "llmgate/eval/rate/rating_server.hpp"
#include "llmgate/eval/report/report.hpp"
#include "llmgate/eval/run/request_outcome.hpp"
#include "llmgate/eval/report/results_files.hpp"
#include "llmgate/eval/run/run_progress.hpp"
#include "llmgate/eval/run/run_records.hpp"
#include "llmgate/eval/run/run_store.hpp"
#include "llmgate/eval/run/runner.hpp"
#include "llmgate/eval/score/score_tokens.hpp"
#include "llmgate/eval/report/summarize.hpp"
#include "llmgate/eval/report/svg_plot.hpp"
#include "llmgate/eval/score/tfidf.hpp"
