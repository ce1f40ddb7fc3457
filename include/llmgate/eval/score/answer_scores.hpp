// answer_scores: the automatic scores of every candidate's answers against
// the reference's answer to the same prompt: TF-IDF cosine, sentence BLEU,
// the embedding cosine of each configured embedder, and SEM-BLEU (the mean
// of an embedding cosine and BLEU).
//
// Which reference answer: the reference candidate's ok answer to the same
// prompt and repetition; when that one failed, its ok answer of the lowest
// repetition to the prompt; when it has none, the answer is not scored.
// Only ok evaluation answers are scored; the reference's own are not (they
// are what the others are measured against).
#pragma once

#include <algorithm>    // std::all_of, std::clamp, std::find_if
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t
#include <functional>   // std::function
#include <map>          // std::map
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string, std::to_string
#include <string_view>  // std::string_view
#include <utility>      // std::move, std::pair
#include <vector>       // std::vector

#include "llmgate/embed/hashing_embedder.hpp"     // hashing_embedder
#include "llmgate/error.hpp"                      // error, errc
#include "llmgate/eval/score/bleu.hpp"            // sentence_bleu
#include "llmgate/eval/plan/evaluation_plan.hpp"  // evaluation_plan, evaluation_embedder
#include "llmgate/eval/run/run_records.hpp"       // request_result, score_record
#include "llmgate/eval/score/score_tokens.hpp"    // score_tokens
#include "llmgate/eval/score/tfidf.hpp"           // tfidf_model
#include "llmgate/simd/kernels.hpp"               // simd::cosine

namespace llmgate::inline v0 {

/// Embeds `texts` with one of the plan's embedders: one vector per text, in
/// order, all of one dimension. The program supplies it (the built-in
/// hashing embedder, or a candidate's /v1/embeddings); tests pass a
/// deterministic function.
using embed_texts =
    std::function<std::vector<std::vector<float>>(const evaluation_embedder&, std::span<const std::string> texts)>;

/// Whether (answer key, method) is scored already, so a resumed run asks no
/// embedder about it again.
using is_scored = std::function<bool(std::string_view request_key, std::string_view method)>;

/// The vectors of `texts` by llmgate's hashing embedder: what the plan's
/// built-in embedder (evaluation_embedder::candidate empty) computes.
inline std::vector<std::vector<float>> embed_with(const hashing_embedder& embedder, std::span<const std::string> texts) {
  std::vector<std::vector<float>> out;
  out.reserve(texts.size());
  for (const auto& text : texts) {
    auto& vector = out.emplace_back(embedder.dimension());
    if (const auto ec = embedder.embed(text, vector)) throw error(ec, "embedding an answer with the hashing embedder");
  }
  return out;
}

namespace detail {

// One scoring method of the plan: "tfidf", "bleu", or an embedder's
// "embedding:<name>" / "sem_bleu:<name>" (embedder: its index in plan.embedders).
enum class method_kind { tfidf, bleu, embedding, sem_bleu };

struct answer_method {
  std::string name;
  method_kind kind;
  std::size_t embedder = 0;
};

// plan.scorers spelled out: "embedding" and "sem_bleu" stand for every
// embedder's, "embedding:<name>" and "sem_bleu:<name>" for one's.
inline std::vector<answer_method> answer_methods(const evaluation_plan& plan) {
  std::vector<answer_method> out;
  // A method listed twice ("embedding" and "embedding:hashing") is scored once.
  const auto add = [&](answer_method method) {
    if (std::find_if(out.begin(), out.end(), [&](const auto& m) { return m.name == method.name; }) == out.end())
      out.push_back(std::move(method));
  };
  const auto per_embedder = [&](std::string_view scorer, std::string_view prefix, method_kind kind) {
    bool found = false;
    for (std::size_t i = 0; i < plan.embedders.size(); ++i) {
      const auto name = std::string(prefix) + ":" + plan.embedders[i].name;
      if (scorer == prefix || scorer == name) {
        add({name, kind, i});
        found = true;
      }
    }
    if (!found && scorer != prefix)
      throw error(errc::invalid_request, "scorer '" + std::string(scorer) + "' names no embedder of the plan");
  };
  for (const auto& scorer : plan.scorers) {
    const std::string_view s = scorer;
    if (s == "tfidf") {
      add({scorer, method_kind::tfidf});
    } else if (s == "bleu") {
      add({scorer, method_kind::bleu});
    } else if (s == "embedding" || s.starts_with("embedding:")) {
      per_embedder(s, "embedding", method_kind::embedding);
    } else if (s == "sem_bleu" || s.starts_with("sem_bleu:")) {
      per_embedder(s, "sem_bleu", method_kind::sem_bleu);
    } else {
      throw error(errc::invalid_request,
                  "unknown scorer '" + scorer + "' (tfidf, bleu, embedding[:<embedder>], sem_bleu[:<embedder>])");
    }
  }
  return out;
}

}  // namespace detail

/// Scores every ok evaluation answer of every candidate except the
/// reference by each method of plan.scorers (the judges are judge.hpp's),
/// one score_record per (answer, method) in results' order and
/// the plan's order of methods. Values are in [0, 1]: cosines below 0 count
/// as 0. TF-IDF's IDF is fitted on every ok evaluation answer of the run,
/// the reference's included. `embed` is asked once per embedder, for the
/// distinct texts that embedder's methods still need; pairs that
/// `already_scored` says are done are skipped. Throws llmgate::error
/// (errc::invalid_request) for a scorer that names no known method or an
/// embedder whose vectors do not match the texts.
inline std::vector<score_record> score_answers(const evaluation_plan& plan, std::span<const request_result> results,
                                               const embed_texts& embed, const is_scored& already_scored = {}) {
  const auto methods = detail::answer_methods(plan);

  // The reference's answers by (prompt, repetition), and its first by prompt.
  std::map<std::pair<std::int64_t, std::int64_t>, const std::string*> reference_answers;
  std::map<std::int64_t, std::pair<std::int64_t, const std::string*>> first_reference_answer;
  std::vector<std::string> collection;
  for (const auto& r : results) {
    if (r.request.kind != request_kind::evaluation || !r.ok()) continue;
    collection.push_back(r.response);
    if (r.request.candidate != plan.reference) continue;
    reference_answers[{r.request.prompt, r.request.repetition}] = &r.response;
    auto [it, added] = first_reference_answer.try_emplace(r.request.prompt, r.request.repetition, &r.response);
    if (!added && r.request.repetition < it->second.first) it->second = {r.request.repetition, &r.response};
  }

  // The answers to score, each with its reference and the methods it still needs.
  struct pending {
    const request_result* answer;
    const std::string* reference;
    std::vector<const detail::answer_method*> methods;
  };
  std::vector<pending> work;
  for (const auto& r : results) {
    if (r.request.kind != request_kind::evaluation || !r.ok() || r.request.candidate == plan.reference) continue;
    const std::string* reference = nullptr;
    if (const auto it = reference_answers.find({r.request.prompt, r.request.repetition}); it != reference_answers.end())
      reference = it->second;
    else if (const auto first = first_reference_answer.find(r.request.prompt); first != first_reference_answer.end())
      reference = first->second.second;
    if (!reference) continue;
    pending p{&r, reference, {}};
    for (const auto& m : methods)
      if (!already_scored || !already_scored(r.request.key, m.name)) p.methods.push_back(&m);
    if (!p.methods.empty()) work.push_back(std::move(p));
  }

  // Each embedder's vectors of the distinct texts its methods compare.
  std::vector<std::map<std::string_view, std::size_t>> text_index(plan.embedders.size());
  std::vector<std::vector<std::vector<float>>> vectors(plan.embedders.size());
  for (std::size_t e = 0; e < plan.embedders.size(); ++e) {
    std::vector<std::string> texts;
    for (const auto& p : work)
      for (const auto* m : p.methods) {
        if (m->embedder != e || (m->kind != detail::method_kind::embedding && m->kind != detail::method_kind::sem_bleu))
          continue;
        for (const std::string* text : {&p.answer->response, p.reference})
          if (text_index[e].try_emplace(*text, texts.size()).second) texts.push_back(*text);
      }
    if (texts.empty()) continue;
    vectors[e] = embed(plan.embedders[e], texts);
    const auto& got = vectors[e];
    const bool consistent = got.size() == texts.size() &&
                            std::all_of(got.begin(), got.end(), [&](const auto& v) { return v.size() == got.front().size(); });
    if (!consistent)
      throw error(errc::invalid_request, "embedder '" + plan.embedders[e].name + "' returned " +
                                             std::to_string(got.size()) + " vectors of unequal or wrong count for " +
                                             std::to_string(texts.size()) + " texts");
  }
  const auto embedding_cosine = [&](std::size_t e, const std::string& a, const std::string& b) {
    const auto& x = vectors[e][text_index[e].at(a)];
    const auto& y = vectors[e][text_index[e].at(b)];
    return std::clamp(static_cast<double>(simd::cosine(x.data(), y.data(), x.size())), 0.0, 1.0);
  };

  std::optional<tfidf_model> tfidf;
  std::vector<score_record> out;
  for (const auto& p : work) {
    const auto& answer = p.answer->response;
    std::optional<double> bleu;
    const auto bleu_of = [&] {
      if (!bleu) bleu = sentence_bleu(*p.reference, answer);
      return *bleu;
    };
    for (const auto* m : p.methods) {
      double value = 0;
      switch (m->kind) {
        case detail::method_kind::tfidf:
          if (!tfidf) tfidf.emplace(collection);
          value = tfidf->similarity(answer, *p.reference);
          break;
        case detail::method_kind::bleu: value = bleu_of(); break;
        case detail::method_kind::embedding: value = embedding_cosine(m->embedder, answer, *p.reference); break;
        case detail::method_kind::sem_bleu:
          value = (embedding_cosine(m->embedder, answer, *p.reference) + bleu_of()) / 2;
          break;
      }
      out.push_back({.request_key = p.answer->request.key, .method = m->name, .value = value});
    }
  }
  return out;
}

}  // namespace llmgate::inline v0
