// POST /v1/feedback {"id": <response id>, "correct": true | false}: the
// verdict goes to every stage that asked to hear it for that answer (the
// cache tier that served it, the router that chose its model). Only the
// tenant that received an answer may judge it, once.
#pragma once

#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/json/parse.hpp>  // boost::json::parse

#include "llmgate/server/http/exchange.hpp"      // exchange
#include "llmgate/server/feedback_registry.hpp"  // feedback_registry
#include "llmgate/server/response_ids.hpp"       // response_ids
#include "llmgate/server/http/responses.hpp"     // json_response, error_response

namespace llmgate::inline v0 {

struct feedback_handler {
  feedback_registry* registry;
  const response_ids* ids;

  http_response operator()(exchange& e) const {
    boost::system::error_code ec;
    const boost::json::value json = boost::json::parse(e.request.body(), ec);
    const auto* object = json.if_object();
    const auto* id = object ? object->if_contains("id") : nullptr;
    const auto* correct = object ? object->if_contains("correct") : nullptr;
    if (ec || !id || !id->is_string() || !correct || !correct->is_bool())
      return error_response(http_status::bad_request, "Send {\"id\": \"<the response id>\", \"correct\": true or false}.",
                            "invalid_request_error", "invalid_request");
    const std::string_view response_id = id->get_string();
    if (registry->judge(ids->number_of(response_id), *e.tenant, correct->get_bool()) ==
        feedback_registry::outcome::unknown_id)
      return error_response(http_status::not_found,
                            "No cached answer with id `" + std::string(response_id) + "` awaits feedback from you.",
                            "invalid_request_error", "unknown_id", "id");
    return json_response(http_status::ok, {{"id", response_id}, {"recorded", true}});
  }
};

}  // namespace llmgate::inline v0
