// Training steps (issue 13): the gradients backward() leaves on the
// parameters of the layers a function builds, and the state an optimizer
// over them holds after step(), in the module summary. The differential
// test reads both from LibTorch: each layer's gradients when the function
// has returned, each optimizer's state() right after its step().
//
// Input shapes for the differential test: testdata/modules/inputs.json.
#include <torch/torch.h>

torch::Tensor sgd_step() {
  torch::nn::Linear fc(16, 4);
  torch::optim::SGD opt(fc->parameters(), 0.01);
  auto x = torch::randn({8, 16});
  auto y = torch::randn({8, 4});
  auto out = fc->forward(x);
  auto loss = torch::mse_loss(out, y);
  opt.zero_grad();
  loss.backward();
  opt.step();
  return loss;
}

torch::Tensor sgd_momentum_sequential() {
  torch::nn::Sequential net(torch::nn::Linear(32, 16), torch::nn::ReLU(),
                            torch::nn::Linear(16, 4));
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  auto x = torch::randn({8, 32});
  auto target = torch::randint(0, 4, {8});
  auto logits = net->forward(x);
  auto loss = torch::nn::functional::cross_entropy(logits, target);
  opt.zero_grad();
  loss.backward();
  opt.step();
  return loss;
}

// A layer whose output is detached gets no gradient, nor momentum.
torch::Tensor detached_first_layer() {
  torch::nn::Linear fc1(8, 16);
  torch::nn::Linear fc2(16, 2);
  torch::nn::Linear unused(4, 4);
  torch::optim::SGD opt1(fc1->parameters(), torch::optim::SGDOptions(0.1).momentum(0.5));
  torch::optim::SGD opt2(fc2->parameters(), torch::optim::SGDOptions(0.1).momentum(0.5));
  auto x = torch::randn({4, 8});
  auto h = fc1->forward(x);
  auto out = fc2->forward(torch::relu(h).detach());
  auto loss = out.pow(2).mean();
  loss.backward();
  opt1.step();
  opt2.step();
  return loss;
}

torch::Tensor adam_conv() {
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(3, 8, 3).padding(1));
  torch::nn::Linear head(8, 10);
  torch::optim::Adam opt(conv->parameters(), torch::optim::AdamOptions(1e-3));
  torch::optim::Adam head_opt(head->parameters());
  auto img = torch::randn({2, 3, 16, 16});
  auto f = conv->forward(img);
  auto pooled = f.mean({2, 3});
  auto logits = head->forward(pooled);
  auto loss = logits.pow(2).mean();
  opt.zero_grad();
  head_opt.zero_grad();
  loss.backward();
  opt.step();
  head_opt.step();
  return loss;
}

torch::Tensor adamw_amsgrad_batchnorm() {
  torch::nn::Sequential net(torch::nn::Linear(12, 8), torch::nn::BatchNorm1d(8),
                            torch::nn::Tanh(), torch::nn::Linear(8, 1));
  torch::optim::AdamW opt(net->parameters(), torch::optim::AdamWOptions(1e-3).amsgrad(true));
  auto x = torch::randn({6, 12});
  auto y = torch::randn({6, 1});
  auto pred = net->forward(x);
  auto loss = torch::mse_loss(pred, y);
  loss.backward();
  opt.step();
  return loss;
}

torch::Tensor rmsprop_centered_embedding() {
  torch::nn::Embedding emb(100, 16);
  torch::nn::Linear fc(16, 3);
  torch::optim::RMSprop opt(emb->parameters(),
                            torch::optim::RMSpropOptions(0.01).momentum(0.9).centered(true));
  torch::optim::RMSprop fc_opt(fc->parameters(), torch::optim::RMSpropOptions(0.01));
  auto tokens = torch::randint(0, 100, {4, 5});
  auto e = emb->forward(tokens);
  auto out = fc->forward(e);
  auto loss = out.sum();
  loss.backward();
  opt.step();
  fc_opt.step();
  return loss;
}

// Adagrad makes its state in the constructor, for every parameter: the
// layer the loss does not reach has state too.
torch::Tensor adagrad_step() {
  torch::nn::Linear fc(10, 5);
  torch::nn::Linear idle(5, 5);
  torch::optim::Adagrad opt(fc->parameters());
  torch::optim::Adagrad idle_opt(idle->parameters());
  auto x = torch::randn({3, 10});
  auto loss = fc->forward(x).sum();
  loss.backward();
  opt.step();
  idle_opt.step();
  return loss;
}

torch::Tensor adam_training_loop() {
  torch::nn::Linear fc(20, 5);
  torch::optim::Adam opt(fc->parameters(), torch::optim::AdamOptions(1e-2).amsgrad(true));
  auto x = torch::randn({16, 20});
  auto y = torch::randn({16, 5});
  for (int step = 0; step < 3; ++step) {
    opt.zero_grad();
    auto pred = fc->forward(x);
    auto loss = torch::mse_loss(pred, y);
    loss.backward();
    opt.step();
  }
  return x;
}
