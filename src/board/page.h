// The board's page: one self-contained HTML document (its CSS and script
// inline, nothing fetched from anywhere but the server that sent it). It
// loads /data.json, then follows /events; every text from the run is set
// as text, never as markup.
#pragma once

#include <string>

#include "util/json.h"

namespace devgraph::board {

const std::string& board_page();

// The page with `data` (what /data.json would answer) inside it, for a
// file that opens with no server: the data is JSON in a script element of
// type application/json, every '<' escaped, so nothing in it can end the
// element or run.
std::string board_snapshot_page(const Json& data);

}  // namespace devgraph::board
