// The learn area: what the cache's verifier and the router fit and measure
// their models with (feature rows, logistic regression, calibration,
// cross-validation folds, AUC and Brier score), with no file format in it.
#pragma once

#include "llmgate/learn/classifier_metrics.hpp"
#include "llmgate/learn/cross_validation.hpp"
#include "llmgate/learn/feature_row.hpp"
#include "llmgate/learn/logistic_regression.hpp"
#include "llmgate/learn/platt_scaling.hpp"
